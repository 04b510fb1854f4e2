package resilient

// Report and WithReport let tests see how each check was answered (see
// checkReport).
type Report = checkReport

// WithReport attaches r to ctx (see withReport).
var WithReport = withReport
