# Unit tests of the public API: handles, adapters, queries, allocation rules, locks, races.
