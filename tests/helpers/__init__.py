"""The tests' helpers: servers, browsers, clusters and forked drivers the tests start, and readers."""
