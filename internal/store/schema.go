package store

// SchemaVersion is the schema version this build of Foundry migrates a
// database to: the number of its migrations (schema_migrations holds one
// row per migration applied, numbered from 1). A database, or a backup of
// one, at a higher version was written by a newer Foundry.
func SchemaVersion() int { return len(migrations) }
