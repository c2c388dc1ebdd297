// The local replay server used by tests and the offline demo lives here.
