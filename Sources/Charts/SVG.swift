// Small, dependency-free SVG charts: pure functions from data to SVG text. Every text that reaches
// the output is escaped (location and model names come from users and servers), numbers are written
// with a fixed number of decimals (the output is the same byte for byte on every run), and colours
// come from CSS classes so one stylesheet handles print and dark mode. Each class's look is also
// written as SVG presentation attributes (which any CSS rule overrides), so a page served under a
// Content-Security-Policy that blocks the inline stylesheet still shows coloured lines on a light
// ground, not black shapes.

/// Escaping and number formatting shared by every chart.
public enum SVG {
    /// `text` safe inside an element or a double- or single-quoted attribute.
    public static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            // Control characters are not allowed in XML 1.0: a hostile name must not break the document.
            case "\u{0}"..."\u{8}", "\u{B}", "\u{C}", "\u{E}"..."\u{1F}", "\u{7F}", "\u{FFFE}", "\u{FFFF}":
                out += "\u{FFFD}"
            // Bidirectional embeddings, overrides and isolates would make a name read backwards
            // or carry the text after it along: dropped (headings isolate names with <bdi>).
            case "\u{202A}"..."\u{202E}", "\u{2066}"..."\u{2069}": break
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// A coordinate: at most one decimal, no trailing zeros, never `-0` (stable and short).
    public static func coordinate(_ value: Double) -> String { fixed(value, places: 1) }

    /// `value` with at most `places` decimals and no trailing zeros; `-0` prints as `0`.
    public static func fixed(_ value: Double, places: Int) -> String {
        guard value.isFinite else { return "0" }
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        // Past 2^53 every double is whole; its shortest text (`1e+20`) is an SVG number, and no
        // conversion to Int64 can trap (1e19 is past Int64.max).
        guard scaled < 9e15 else { return value.rounded().description }
        let whole = Int64(scaled)
        let unit = Int64(scale)
        var text = String(whole / unit)
        var fraction = whole % unit
        if places > 0 && fraction != 0 {
            var digits = String(fraction)
            digits = String(repeating: "0", count: places - digits.count) + digits
            while digits.hasSuffix("0") { digits.removeLast() }
            text += "." + digits
            fraction = 1
        }
        return (value < 0 && (whole != 0)) ? "-" + text : text
    }

    /// A count short enough to sit under a point: `812`, `70.1k`, `1.2M` (exact counts are in the
    /// tooltips and the tables).
    public static func count(_ n: Int) -> String {
        let magnitude = abs(n)
        if magnitude < 10_000 { return String(n) }
        if magnitude < 1_000_000 { return fixed(Double(n) / 1000, places: magnitude < 100_000 ? 1 : 0) + "k" }
        return fixed(Double(n) / 1_000_000, places: 1) + "M"
    }

    /// A tick label: as many decimals as the tick step needs, no more.
    public static func tickLabel(_ value: Double, step: Double) -> String {
        var places = 0
        var s = abs(step)
        while places < 6 && s > 0 && (s - s.rounded()).magnitude > 1e-9 * max(1, s) {
            s *= 10
            places += 1
        }
        return fixed(value, places: places)
    }

    /// The stylesheet the charts' classes need: the seven Okabe–Ito colours, which colour-blind readers
    /// can tell apart, then three of Paul Tol's (wine, indigo, olive) so nine models never share a
    /// colour; text and axes in `currentColor` so dark mode only changes the page colour (and the
    /// colours too dark to read on it).
    public static let css = """
        .wx-chart{font:12px system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;max-width:100%;height:auto}
        .wx-chart text{fill:currentColor}
        .wx-chart .title{font-size:14px;font-weight:600}
        .wx-chart .small{font-size:10px}
        .wx-chart .axis{stroke:currentColor;stroke-width:1;fill:none}
        .wx-chart .grid{stroke:currentColor;stroke-opacity:.15;stroke-width:1;fill:none}
        .wx-chart .ref{stroke:currentColor;stroke-opacity:.6;stroke-dasharray:4 3;fill:none}
        .wx-chart .line{fill:none;stroke-width:2;stroke-linejoin:round}.wx-chart .band{stroke:none;fill-opacity:.16}
        .wx-chart .c0{stroke:#0072B2;fill:#0072B2}.wx-chart .c1{stroke:#D55E00;fill:#D55E00}
        .wx-chart .c2{stroke:#009E73;fill:#009E73}.wx-chart .c3{stroke:#CC79A7;fill:#CC79A7}
        .wx-chart .c4{stroke:#E69F00;fill:#E69F00}.wx-chart .c5{stroke:#56B4E9;fill:#56B4E9}
        .wx-chart .c6{stroke:#F0E442;fill:#F0E442}.wx-chart .c7{stroke:#882255;fill:#882255}
        .wx-chart .c8{stroke:#332288;fill:#332288}.wx-chart .c9{stroke:#999933;fill:#999933}
        .wx-chart .cobs{stroke:currentColor;fill:currentColor}
        .wx-chart .d1{stroke-dasharray:6 3}.wx-chart .d2{stroke-dasharray:2 3}.wx-chart .d3{stroke-dasharray:8 3 2 3}
        .wx-chart path.line{fill:none}.wx-chart path.line.cobs{stroke-width:1.5}
        .wx-chart .n-row text{fill:inherit;stroke:none}
        .wx-chart .k-fetched{fill:#009E73}.wx-chart .k-repeated{fill:#56B4E9}.wx-chart .k-missed{fill:#D55E00}
        .wx-chart .k-failed{fill:#D55E00}
        @media (prefers-color-scheme:dark){.wx-chart .c0{stroke:#8FA8FF;fill:#8FA8FF}
        .wx-chart .c7{stroke:#E2789F;fill:#E2789F}.wx-chart .c8{stroke:#A394F0;fill:#A394F0}}
        """

    /// The presentation attributes that give an element of `classes` the look `css` gives it:
    /// colours first, then what the structural classes (line, axis, grid, ...) fix over them,
    /// as the stylesheet's more specific rules do.
    public static func presentation(_ classes: [Substring]) -> [(String, String)] {
        var attributes: [(String, String)] = []
        func set(_ name: String, _ value: String) {
            if let index = attributes.firstIndex(where: { $0.0 == name }) {
                attributes[index].1 = value
            } else {
                attributes.append((name, value))
            }
        }
        for name in classes {
            if let colour = paletteColours[String(name)] {
                set("stroke", colour)
                set("fill", colour)
            } else if name == "cobs" {
                set("stroke", "currentColor")
                set("fill", "currentColor")
            } else if let colour = stateColours[String(name)] {
                set("fill", colour)
            }
        }
        for name in classes {
            let fixed: [(String, String)]
            switch name {
            case "wx-chart":
                fixed = [("font-family", "system-ui, -apple-system, Segoe UI, Roboto, sans-serif"), ("font-size", "12")]
            case "title": fixed = [("font-size", "14"), ("font-weight", "600")]
            case "small": fixed = [("font-size", "10")]
            case "axis": fixed = [("stroke", "currentColor"), ("stroke-width", "1"), ("fill", "none")]
            case "grid":
                fixed = [("stroke", "currentColor"), ("stroke-opacity", ".15"), ("stroke-width", "1"), ("fill", "none")]
            case "ref":
                fixed = [
                    ("stroke", "currentColor"), ("stroke-opacity", ".6"), ("stroke-dasharray", "4 3"), ("fill", "none")
                ]
            case "line":
                fixed = [
                    ("fill", "none"), ("stroke-width", classes.contains("cobs") ? "1.5" : "2"),
                    ("stroke-linejoin", "round")
                ]
            case "n-row": fixed = [("stroke", "none")]
            case "d1": fixed = [("stroke-dasharray", "6 3")]
            case "d2": fixed = [("stroke-dasharray", "2 3")]
            case "d3": fixed = [("stroke-dasharray", "8 3 2 3")]
            default: fixed = []
            }
            for (attribute, value) in fixed { set(attribute, value) }
        }
        return attributes
    }

    static let paletteColours = [
        "c0": "#0072B2", "c1": "#D55E00", "c2": "#009E73", "c3": "#CC79A7", "c4": "#E69F00", "c5": "#56B4E9",
        "c6": "#F0E442", "c7": "#882255", "c8": "#332288", "c9": "#999933"
    ]
    static let stateColours = [
        "k-fetched": "#009E73", "k-repeated": "#56B4E9", "k-missed": "#D55E00", "k-failed": "#D55E00"
    ]

    /// `svg` with the presentation attributes of every tag's `class="..."` added at the end of the
    /// tag (an attribute the tag already has is left as it is).
    public static func presented(_ svg: String) -> String {
        let bytes = Array(svg.utf8)
        let marker = Array(" class=\"".utf8)
        let quote = UInt8(ascii: "\""), less = UInt8(ascii: "<"), greater = UInt8(ascii: ">")
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + bytes.count / 4)
        var tagStart = 0
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == less { tagStart = index }
            guard byte == marker[0], bytes[index...].starts(with: marker) else {
                out.append(byte)
                index += 1
                continue
            }
            let valueStart = index + marker.count
            guard let close = bytes[valueStart...].firstIndex(of: quote) else {
                out += bytes[index...]
                break
            }
            // At the end of the tag (before `>` or `/>`), so the attributes written first stay first.
            let tagEnd = bytes[close...].firstIndex(of: greater) ?? bytes.count
            let insertAt = tagEnd > close + 1 && bytes[tagEnd - 1] == UInt8(ascii: "/") ? tagEnd - 1 : tagEnd
            let tag = String(decoding: bytes[tagStart..<tagEnd], as: UTF8.self)
            out += bytes[index..<insertAt]
            let classes = String(decoding: bytes[valueStart..<close], as: UTF8.self).split(separator: " ")
            for (name, value) in presentation(classes) where !tag.contains(" \(name)=\"") {
                out += Array(" \(name)=\"\(value)\"".utf8)
            }
            index = insertAt
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Opens an `<svg>` with its accessible name: `role="img"`, a `<title>` and `aria-labelledby`.
    /// `standalone` adds the namespace and the stylesheet, for a file of its own.
    static func open(id: String, width: Int, height: Int, title: String, description: String, standalone: Bool)
        -> String
    {
        let id = idSafe(id)
        // The namespace only where it is needed: HTML parses inline SVG without it, and a page
        // then holds no URL at all.
        let namespace = standalone ? " xmlns=\"http://www.w3.org/2000/svg\"" : ""
        var out =
            "<svg\(namespace) class=\"wx-chart\" role=\"img\" viewBox=\"0 0 \(width) \(height)\" width=\"\(width)\" height=\"\(height)\" aria-labelledby=\"\(id)-t \(id)-d\">"
        out += "<title id=\"\(id)-t\">\(escape(title))</title><desc id=\"\(id)-d\">\(escape(description))</desc>"
        if standalone {
            out +=
                "<style>svg{color:#222}@media (prefers-color-scheme:dark){svg{color:#ddd}}\n\(css)</style>"
        }
        return out
    }

    /// An id made of letters, digits and `-` only (ids are built from variable names).
    static func idSafe(_ id: String) -> String {
        String(
            id.unicodeScalars.map { scalar -> Character in
                let c = Character(scalar)
                return (c.isASCII && (c.isLetter || c.isNumber)) ? c : "-"
            })
    }

    /// A `<text>` element.
    static func text(
        _ content: String, x: Double, y: Double, anchor: String = "start", cssClass: String? = nil,
        rotate: Bool = false
    ) -> String {
        var out = "<text x=\"\(coordinate(x))\" y=\"\(coordinate(y))\""
        if anchor != "start" { out += " text-anchor=\"\(anchor)\"" }
        if let cssClass { out += " class=\"\(cssClass)\"" }
        if rotate { out += " transform=\"rotate(-90 \(coordinate(x)) \(coordinate(y)))\"" }
        return out + ">\(escape(content))</text>"
    }
}
