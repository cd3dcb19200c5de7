/// The script and style sheet of `report.html`, written as ordinary files (`Html/assets/report.js` and
/// `report.css`, where an editor and a linter see JavaScript and CSS) and compiled into this library as bytes
/// (`.embedInCode` in Package.swift): the page is written with no file to find at run time, so the executable
/// renders it wherever it is copied, and the same build always writes the same page.
enum HtmlAssets {
    /// The page's JavaScript: every view drawn from the JSON data.
    static let script = String(decoding: PackageResources.report_js, as: UTF8.self)
    /// The page's CSS, light and dark.
    static let style = String(decoding: PackageResources.report_css, as: UTF8.self)
}
