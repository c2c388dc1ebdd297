import WxCore

// The typed rows the store's streams hand a visitor: named fields, decoded by the engine next to
// its SQL. A row is valid only while the visitor runs (its text points into the engine's buffer and
// its `values` buffer is reused for the next row), which is what keeps a stream of millions of
// rows free of a heap allocation per row.

/// Text in a streamed row: its UTF-8 bytes, valid only while the visitor runs. Exports copy the
/// bytes straight out; `string` makes a String when one is needed.
public struct RowText {
    /// The bytes (empty for NULL or '').
    public let utf8: UnsafeRawBufferPointer

    @inlinable public init(utf8: UnsafeRawBufferPointer) { self.utf8 = utf8 }

    /// The text as a String.
    @inlinable public var string: String { String(decoding: utf8, as: UTF8.self) }
}

/// One forecast/observation pair as verify scores it (both values in their `PhysicalRange`).
public struct VerificationPair {
    public var model: RowText
    public var issuedAt: Int64
    public var validTime: Int64
    public var forecast: Double
    public var observed: Double

    @inlinable public init(model: RowText, issuedAt: Int64, validTime: Int64, forecast: Double, observed: Double) {
        self.model = model
        self.issuedAt = issuedAt
        self.validTime = validTime
        self.forecast = forecast
        self.observed = observed
    }
}

/// One pair for `export pairs` (neither value NULL).
public struct ExportPair {
    public var location: RowText
    public var model: RowText
    public var issuedAt: Int64
    public var validTime: Int64
    public var forecast: Double
    public var observed: Double

    @inlinable public init(
        location: RowText, model: RowText, issuedAt: Int64, validTime: Int64, forecast: Double, observed: Double
    ) {
        self.location = location
        self.model = model
        self.issuedAt = issuedAt
        self.validTime = validTime
        self.forecast = forecast
        self.observed = observed
    }
}

/// One pair for `export verif`, with the location's coordinates.
public struct VerifPair {
    public var issuedAt: Int64
    public var validTime: Int64
    public var latitude: Double
    public var longitude: Double
    /// The location's elevation, else the model grid's; nil when neither is known.
    public var altitude: Double?
    public var observed: Double
    public var forecast: Double

    @inlinable public init(
        issuedAt: Int64, validTime: Int64, latitude: Double, longitude: Double, altitude: Double?, observed: Double,
        forecast: Double
    ) {
        self.issuedAt = issuedAt
        self.validTime = validTime
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.observed = observed
        self.forecast = forecast
    }
}

/// One hour of a run for `export hourly`: `values` in the order of the variables asked for.
public struct HourlyForecastRow {
    public var location: RowText
    public var model: RowText
    public var issuedAt: Int64
    public var fetchedAt: Int64
    public var validTime: Int64
    public var values: [Double?]

    @inlinable public init(
        location: RowText, model: RowText, issuedAt: Int64, fetchedAt: Int64, validTime: Int64, values: [Double?]
    ) {
        self.location = location
        self.model = model
        self.issuedAt = issuedAt
        self.fetchedAt = fetchedAt
        self.validTime = validTime
        self.values = values
    }
}

/// One day of a run for `export daily`: `values` in the order of the variables asked for (an
/// instant, such as sunrise, as its unixtime).
public struct DailyForecastRow {
    public var location: RowText
    public var model: RowText
    public var issuedAt: Int64
    public var fetchedAt: Int64
    /// The local date, YYYY-MM-DD.
    public var date: RowText
    public var values: [Double?]

    @inlinable public init(
        location: RowText, model: RowText, issuedAt: Int64, fetchedAt: Int64, date: RowText, values: [Double?]
    ) {
        self.location = location
        self.model = model
        self.issuedAt = issuedAt
        self.fetchedAt = fetchedAt
        self.date = date
        self.values = values
    }
}

/// One observed hour for `export observations`: `values` in the order of the variables asked for.
public struct ObservationRow {
    public var location: RowText
    public var source: RowText
    public var time: Int64
    public var values: [Double?]

    @inlinable public init(location: RowText, source: RowText, time: Int64, values: [Double?]) {
        self.location = location
        self.source = source
        self.time = time
        self.values = values
    }
}
