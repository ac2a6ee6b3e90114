package retrycore

import (
	"maps"
	"slices"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
)

// recordedLots are the parking lots recorded in testdata/frameworks and
// testdata/recorded, by name: the headers of each parked message.
func recordedLots(t *testing.T) map[string][]amqp.Table {
	lots := map[string][]amqp.Table{}
	for _, name := range frameworkNames(t) {
		lots["frameworks/"+name] = append(lots["frameworks/"+name], loadFramework(t, name).Message.Headers)
	}
	for _, name := range recordedNames(t) {
		lots["recorded/"+name] = append(lots["recorded/"+name], loadRecording(t, name).Message.Headers)
	}
	return lots
}

// TestGroupsOfTheRecordedLots counts the error groups of every recorded
// parking lot, by the error (GroupKey, what a browse groups by) and by the
// decoded facts (Facts.GroupKey, which reads a trace header), and of all
// of them together. Every recording holds one parked message, so a lot is
// one group; together they are 9, as before: no two of their errors differ
// only in a value.
func TestGroupsOfTheRecordedLots(t *testing.T) {
	want := map[string]string{ // Facts.GroupKey of each lot where it is not its error's GroupKey
		"recorded/spring-republish":  "java.lang.IllegalStateException: order <n> has no shipping address at com.example.orders.OrderListener.handle",
		"recorded/masstransit-error": "System.NullReferenceException: Object reference not set to an instance of an object. at Orders.Consumers.SubmitOrderConsumer.Consume",
	}
	byError, byFacts := map[string]int{}, map[string]int{}
	messages := 0
	lots := recordedLots(t)
	for _, name := range slices.Sorted(maps.Keys(lots)) {
		lot := lots[name]
		errs, facts := map[string]bool{}, map[string]bool{}
		for _, h := range lot {
			f := Decode(h)
			k, fk := GroupKey(f.Error), f.GroupKey()
			errs[k], facts[fk] = true, true
			byError[k]++
			byFacts[fk]++
			messages++
			if w, ok := want[name]; ok && fk != w || !ok && fk != k {
				t.Errorf("%s: Facts.GroupKey = %q, want %q", name, fk, want[name])
			}
		}
		t.Logf("%-40s %d message(s), %d group(s) by error, %d by facts", name, len(lot), len(errs), len(facts))
		if len(errs) != 1 || len(facts) != 1 {
			t.Errorf("%s: %d groups by error, %d by facts; want 1", name, len(errs), len(facts))
		}
	}
	t.Logf("all %d recorded messages: %d groups by error, %d by facts", messages, len(byError), len(byFacts))
	for _, k := range slices.Sorted(maps.Keys(byFacts)) {
		t.Logf("%3d  %q", byFacts[k], k)
	}
	if len(byError) != 9 || len(byFacts) != 9 {
		t.Errorf("all lots: %d groups by error, %d by facts; want 9: %v", len(byError), len(byFacts), byFacts)
	}
}
