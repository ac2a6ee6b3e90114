package format

import (
	"fmt"
	"strconv"
)

// TopGroup is a parking lot's largest error group as its dashboard cell:
// "30 × ledger down <n>", cut to width cells; "-" when no scan counted
// one.
func TopGroup(group string, count int64, width int) string {
	if group == "" {
		return "-"
	}
	return Cut(fmt.Sprintf("%d × %s", count, OneLine(group)), width)
}

// Known is a count as a dashboard cell: the number, or "-" when the broker
// does not tell it.
func Known(n int64, known bool) string {
	if !known {
		return "-"
	}
	return strconv.FormatInt(n, 10)
}
