package lease

// Tracked is tracked, for the test of the table's bound.
func (b *Backend) Tracked() int { return b.tracked() }
