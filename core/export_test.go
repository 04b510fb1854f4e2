package core

// PendingTimers returns how many After channels of c have not fired yet,
// for tests that move the clock once a waiter waits.
func PendingTimers(c *ManualClock) int { return int(c.waiting.Load()) }
