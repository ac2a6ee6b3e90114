package store

// Interner shares the values that repeat across a browse's messages.
// amqp091-go allocates every header string of every delivery anew, so
// 100k summaries of one parking lot held 100k copies of the same exchange,
// routing key, failure kind and death entries (about 30 MB), and a pointer
// to an identical origin each. The caller shares only what repeats: error
// texts, ids and times differ per message and are left alone. Values of
// type T (an origin) are shared by pointer. The zero value is ready; it is
// used by one goroutine (a browse).
type Interner[T comparable] struct {
	strs map[string]string
	vals map[T]*T
}

// internMax bounds each table: a parking lot whose values are all
// different gains nothing, and must not grow a second copy of them.
const internMax = 4096

// String is the shared copy of s.
func (in *Interner[T]) String(s string) string {
	if s == "" {
		return ""
	}
	if c, ok := in.strs[s]; ok {
		return c
	}
	if len(in.strs) < internMax {
		if in.strs == nil {
			in.strs = map[string]string{}
		}
		in.strs[s] = s
	}
	return s
}

// Value is the shared pointer to a value equal to *p: the one kept before,
// else a copy of *p, whose own parts fresh shares (fresh may be nil), kept
// while the table has room; p itself once it is full. Shared values are
// read, never changed in place, so sharing is safe.
func (in *Interner[T]) Value(p *T, fresh func(*T)) *T {
	if q, ok := in.vals[*p]; ok {
		return q
	}
	v := *p
	if fresh != nil {
		fresh(&v)
	}
	if len(in.vals) >= internMax {
		return p
	}
	if in.vals == nil {
		in.vals = map[T]*T{}
	}
	in.vals[v] = &v
	return &v
}
