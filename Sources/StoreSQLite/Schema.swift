import WxSQLite
import WxStore

/// The wxdb schema: the migrations this build carries (see EmbeddedMigrations.swift).
public enum Schema {}
