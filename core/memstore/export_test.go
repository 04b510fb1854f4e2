package memstore

// WithShards sets the number of shards for tests (see withShards).
var WithShards = withShards
