import HarnessModel
import Testing

/// The one grammar of figure names, read by thresholds, `rank:`, baselines, history and `history bisect --figure`.
@Suite struct FigureNameTests {
    static let every: [Figure] =
        Figure.simpleNames.values.sorted { $0.description < $1.description }
        + [.phasePeakAllocated("burst"), .phasePeakAllocated("set-up_2"), .metric("hitRate"), .metric("p99-ms")]

    @Test func everyFigureReadsBackFromItsName() {
        for figure in Self.every {
            #expect(Figure(name: figure.description) == figure, "\(figure)")
        }
        #expect(Figure.simpleNames.count == 15)
    }

    @Test(arguments: [
        "", "peak", "PeakAllocated", "phases.burst", "phases..peakAllocated", "phases.burst.peakResident",
        "phases.a.b.peakAllocated", "metrics.", "metrics", "metrics.a.b", "burst.peakAllocated", " peakAllocated",
    ])
    func anythingElseIsNoFigure(name: String) {
        #expect(Figure(name: name) == nil)
    }

    @Test func theFormsAreListedForMessages() {
        #expect(Figure.nameForms.first == "duration")
        #expect(Figure.nameForms.suffix(2) == ["phases.<phase>.peakAllocated", "metrics.<name>"])
    }
}
