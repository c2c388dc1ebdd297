// swift-tools-version:6.0
import PackageDescription

// The folders say what each part is: SQLite (the only code that touches the C API), Core (domain
// types, JSON, the Open-Meteo decoder, CSV), Store (the Store protocol and its domain types), StoreSQLite (the
// SQLite engine: schema, migrations, repository), StationFiles (weewx and Home Assistant readers), Fetcher (HTTP
// client over libcurl, batching, geocoding), Queries (verification and exports), CLI (commands), Replay (the
// local test server). `wxdb` itself is a thin executable over CLI.
let package = Package(
    name: "wxdb",
    // macOS 15 for String(validating:as:), used by the strict JSON and CSV readers.
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "wxdb", targets: ["wxdb"]),
        .executable(name: "wxdb-replay", targets: ["wxdb-replay"])
    ],
    targets: [
        // SQLite's header only: libsqlite3 is opened with dlopen when wxdb first opens a SQLite file
        // (Sources/CSQLite/shim.h), so a start that opens none (--version, --help, PostgreSQL) skips it.
        .systemLibrary(
            name: "CSQLite",
            path: "Sources/CSQLite",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .systemLibrary(
            name: "CCurl",
            path: "Sources/CCurl",
            providers: [.apt(["libcurl4-openssl-dev"]), .brew(["curl"])]
        ),
        // libpq's header only: the library is opened with dlopen at the first PostgreSQL connection
        // (Sources/CLibPQ/shim.h), so SQLite commands never load it and its OpenSSL/GSSAPI/LDAP.
        .systemLibrary(
            name: "CLibPQ",
            path: "Sources/CLibPQ",
            providers: [.apt(["libpq-dev"]), .brew(["libpq"])]
        ),
        .systemLibrary(
            name: "CZlib",
            path: "Sources/CZlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        // The migration type (name, SQL, checksum) both engines' schemas are made of.
        .target(name: "WxSchemaMigration", path: "Sources/SchemaMigration"),
        .target(name: "WxSQLite", dependencies: ["CSQLite", "WxSchemaMigration"], path: "Sources/SQLite"),
        .target(name: "WxCore", path: "Sources/Core"),
        // Official stations' files (METAR, ISD-Lite, GHCNh, Meteostat) read into hourly values;
        // zlib only for their gzip downloads.
        .target(name: "WxStations", dependencies: ["WxCore", "CZlib"], path: "Sources/Stations"),
        // The Store protocol and its domain types, engine-neutral: what every command uses.
        // zlib for the ensemble members' packed format (MemberBlob), which both engines store.
        .target(name: "WxStore", dependencies: ["WxCore", "CZlib"], path: "Sources/Store"),
        // The SQLite engine (SQLiteStore): schema, migrations, SQL, the kept sums' upkeep.
        .target(
            name: "WxStoreSQLite", dependencies: ["WxSQLite", "WxCore", "WxStore", "CZlib"], path: "Sources/StoreSQLite"
        ),
        // Readers of other programs' SQLite files (weewx, Home Assistant), read-only and bounded.
        .target(name: "WxStationFiles", dependencies: ["WxSQLite", "WxCore", "WxStore"], path: "Sources/StationFiles"),
        .target(name: "WxFetcher", dependencies: ["WxCore", "WxStore", "CCurl"], path: "Sources/Fetcher"),
        .target(name: "WxQueries", dependencies: ["WxCore", "WxStore"], path: "Sources/Queries"),
        // The PostgreSQL client (connections, parameters, COPY, streaming, advisory locks,
        // redaction) and wxdb's PostgreSQL schema and migrations over it.
        .target(name: "WxPostgres", dependencies: ["CLibPQ"], path: "Sources/Postgres"),
        .target(
            name: "WxPostgresStore", dependencies: ["WxPostgres", "WxCore", "WxStore", "WxSchemaMigration"],
            path: "Sources/PostgresStore"),
        .target(name: "WxReplay", path: "Sources/Replay"),
        .target(name: "WxCharts", path: "Sources/Charts"),
        .target(
            name: "WxCLI",
            dependencies: [
                "WxCore", "WxStore", "WxStoreSQLite", "WxStationFiles", "WxFetcher", "WxQueries", "WxCharts",
                "WxStations", "WxPostgres", "WxPostgresStore"
            ],
            path: "Sources/CLI"
        ),
        .executableTarget(name: "wxdb", dependencies: ["WxCLI"], path: "Sources/wxdb"),
        .executableTarget(name: "wxdb-replay", dependencies: ["WxReplay"], path: "Sources/wxdb-replay"),

        // Scratch folders for tests, removed when the test process exits.
        .target(name: "TestSupport", dependencies: ["WxSQLite"], path: "Tests/TestSupport"),
        .testTarget(name: "SQLiteTests", dependencies: ["WxSQLite", "TestSupport"]),
        .testTarget(name: "CoreTests", dependencies: ["WxCore", "TestSupport"]),
        .testTarget(
            name: "StoreTests",
            dependencies: ["WxStore", "WxStoreSQLite", "WxStationFiles", "WxSQLite", "WxCore", "TestSupport"]),
        .testTarget(
            name: "FetcherTests",
            dependencies: ["WxFetcher", "WxReplay", "WxCore", "WxStore", "WxStoreSQLite", "WxSQLite", "TestSupport"]),
        .testTarget(
            name: "QueriesTests",
            dependencies: [
                "WxQueries", "WxStore", "WxStoreSQLite", "WxSQLite", "WxCore", "TestSupport", "WxPostgresStore"
            ]),
        .testTarget(name: "ChartsTests", dependencies: ["WxCharts"]),
        .testTarget(
            name: "PostgresTests",
            dependencies: [
                "WxPostgres", "WxPostgresStore", "WxStore", "WxStoreSQLite", "WxSQLite", "WxQueries", "WxCore",
                "WxSchemaMigration", "TestSupport"
            ]),
        .testTarget(name: "StationsTests", dependencies: ["WxStations", "WxCore"]),
        .testTarget(
            name: "CLITests",
            dependencies: [
                "WxCLI", "WxQueries", "WxStore", "WxStoreSQLite", "WxStationFiles", "WxSQLite", "WxCore", "WxReplay",
                "TestSupport", "WxPostgres", "WxPostgresStore"
            ])
    ],
    swiftLanguageModes: [.v6]
)
