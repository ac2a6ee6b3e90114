package store

import (
	"fmt"
	"testing"
	"unsafe"
)

// Equal values come back as one copy; a full table shares nothing more
// and keeps no second copy.
func TestInternerSharesRepeatsWithinItsBound(t *testing.T) {
	type pair struct{ a, b string }
	var in Interner[pair]
	x, y := string([]byte("orders")), string([]byte("orders"))
	if in.String(x) != "orders" || len(in.strs) != 1 {
		t.Fatal("String did not keep the first copy")
	}
	if got := in.String(y); unsafe.StringData(got) != unsafe.StringData(x) {
		t.Fatal("String gave back a second copy")
	}
	p1 := in.Value(&pair{"orders", "rk"}, func(v *pair) { v.a = in.String(v.a) })
	p2 := in.Value(&pair{"orders", "rk"}, nil)
	if p1 != p2 || unsafe.StringData(p1.a) != unsafe.StringData(x) {
		t.Fatal("equal values are not one pointer to shared strings")
	}
	for i := range internMax + 10 {
		in.String(fmt.Sprint("s", i))
		in.Value(&pair{fmt.Sprint(i), ""}, nil)
	}
	if len(in.strs) != internMax || len(in.vals) != internMax {
		t.Fatalf("tables hold %d strings, %d values; the bound is %d", len(in.strs), len(in.vals), internMax)
	}
	late := &pair{"late", ""}
	if in.Value(late, nil) != late {
		t.Fatal("a full table did not give the value back as it was")
	}
}
