package store

// ListStatement is the statement List runs for q, in the dialect's
// placeholders, and its arguments (for the plan tests).
func (b *Base) ListStatement(q ListQuery) (string, []any) {
	query, args, _ := b.listStatement(q)
	return b.D.Q(query), args
}
