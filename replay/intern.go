package replay

import "github.com/parkinglot/parkinglot/retrycore"

// interner shares the strings and origins that repeat across a browse's
// summaries. amqp091-go allocates every header string of every delivery
// anew, so 100k summaries of one parking lot held 100k copies of the same
// exchange, routing key, failure kind and death entries (about 30 MB), and
// a pointer to an identical origin each. Error texts, ids and times differ
// per message and are left alone. It is used by one goroutine (a browse).
type interner struct {
	strs    map[string]string
	origins map[retrycore.Origin]*retrycore.Origin
}

// internMax bounds each table: a parking lot whose values are all
// different gains nothing, and must not grow a second copy of them.
const internMax = 4096

func newInterner() *interner {
	return &interner{strs: map[string]string{}, origins: map[retrycore.Origin]*retrycore.Origin{}}
}

func (in *interner) str(s string) string {
	if s == "" {
		return ""
	}
	if c, ok := in.strs[s]; ok {
		return c
	}
	if len(in.strs) < internMax {
		in.strs[s] = s
	}
	return s
}

// summary replaces s's repeating values with shared ones. Summaries are
// read, never changed in place, so sharing is safe.
func (in *interner) summary(s *Summary) {
	s.Exchange, s.RoutingKey, s.ContentType = in.str(s.Exchange), in.str(s.RoutingKey), in.str(s.ContentType)
	f := &s.Facts
	f.FailureKind, f.ErrorType = in.str(f.FailureKind), in.str(f.ErrorType)
	for _, r := range []*retrycore.DeathRef{&f.FirstDeath, &f.LastDeath} {
		r.Queue, r.Reason, r.Exchange = in.str(r.Queue), in.str(r.Reason), in.str(r.Exchange)
	}
	for i := range f.Deaths {
		d := &f.Deaths[i]
		d.Queue, d.Reason, d.Exchange = in.str(d.Queue), in.str(d.Reason), in.str(d.Exchange)
		d.OriginalExpiration = in.str(d.OriginalExpiration)
		for j, rk := range d.RoutingKeys {
			d.RoutingKeys[j] = in.str(rk)
		}
	}
	if s.Origin == nil {
		return
	}
	if o, ok := in.origins[*s.Origin]; ok {
		s.Origin = o
		return
	}
	o := *s.Origin
	o.Exchange, o.RoutingKey, o.Source, o.Queue = in.str(o.Exchange), in.str(o.RoutingKey), in.str(o.Source), in.str(o.Queue)
	if len(in.origins) < internMax {
		in.origins[o] = &o
		s.Origin = &o
	}
}
