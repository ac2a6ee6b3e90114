package broker

import "time"

// SetPassIdle shortens the wait after which a pass asks whether anything
// is still ready, so a test can make it ask while a delivery is on its way.
func SetPassIdle(p *Pass, d time.Duration) { p.idle = d }
