package retrycore

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestGroupKeySameGroup: failures that differ only in values share a key.
func TestGroupKeySameGroup(t *testing.T) {
	groups := []struct {
		name  string
		texts []string
		key   string
	}{
		{"numbers", []string{"transfer 123 not found", "transfer 456 not found", "  transfer 7   not found "}, "transfer <n> not found"},
		{"UUIDs", []string{"user 8f14e45f-ceea-467f-a0f8-ad5b6e4e2a11 missing", "user 0B6F0000-AC11-0242-5F7A-08DC1A2B3C4D missing"}, "user <uuid> missing"},
		{"hex ids", []string{"object 507f1f77bcf86cd799439011 locked", "object 5f2b8c9d1e3a4b5c6d7e8f90 locked"}, "object <id> locked"},
		{"0x hex", []string{"bad pointer 0x1f", "bad pointer 0xC0FFEE"}, "bad pointer <hex>"},
		{"double-quoted values", []string{`customer "c-88" not found`, `customer "ACME Ltd." not found`}, `customer "…" not found`},
		{"single-quoted values", []string{"queue 'orders' is full", "queue 'billing.v2' is full"}, "queue '…' is full"},
		{"apostrophes are not quotes", []string{"can't find 'abc'", "can't find 'xyz'"}, "can't find '…'"},
		{"numbers with units", []string{"timeout after 5000ms", "timeout after 250ms", "timeout after 12.5ms"}, "timeout after <n>ms"},
		{"negative and decimal numbers", []string{"balance -12.50 below limit", "balance 3 below limit"}, "balance <n> below limit"},
		{"times", []string{"expired at 2024-05-01T12:00:00Z", "expired at 2026-12-02 15:09:33.123+02:00"}, "expired at <time>"},
		{"recorded seed-1 errors", []string{"payment gateway timeout after 5000 ms (attempt 4)", "payment gateway timeout after 3000 ms (attempt 2)"}, "payment gateway timeout after <n> ms (attempt <n>)"},
		{"ids inside codes", []string{"order ORD-2024-000123 rejected", "order ORD-2025-000999 rejected"}, "order ORD-<n>-<n> rejected"},
		{"addresses", []string{"dial 10.0.0.1:5672 refused", "dial 10.0.0.2:5673 refused"}, "dial <addr> refused"},
	}
	for _, g := range groups {
		for _, text := range g.texts {
			if got := GroupKey(text); got != g.key {
				t.Errorf("%s: GroupKey(%q) = %q, want %q", g.name, text, got, g.key)
			}
		}
	}
}

// TestGroupKeyNamesTheCause: one cause, one group, where the values that
// split it were ids of letters and digits, addresses, or a trace's lines.
func TestGroupKeyNamesTheCause(t *testing.T) {
	traces := map[string]string{}
	for _, tc := range traceCases() {
		traces[tc.name] = tc.text
	}
	for _, g := range []struct {
		name  string
		texts []string
		key   string
	}{
		{"transfer ids", []string{"insufficient funds for transfer T-8f2a91c3", "insufficient funds for transfer T-8f2a",
			"insufficient funds for transfer T-3b07e1", "insufficient funds for transfer T-829311"},
			"insufficient funds for transfer T-<id>"},
		{"order ids", []string{"order ORD-7f3a9c rejected", "order ORD-a1b2c3 rejected", "order ORD-0d9e2f rejected"}, "order ORD-<id> rejected"},
		{"ids without a prefix", []string{"request 9e3779b1 failed", "request x7k9p2q4 failed", "request ORD123456 failed"}, "request <id> failed"},
		{"prefixed ids of any alphabet", []string{"customer cus_NffrFeUf9Hib gone", "customer cus_9s8d7f6e gone"}, "customer cus_<id> gone"},
		{"ECONNREFUSED from Node, IPv4 and IPv6, one port or another",
			[]string{"connect ECONNREFUSED 127.0.0.1:5432", "connect ECONNREFUSED ::1:5432", "connect ECONNREFUSED [::1]:5432",
				"connect ECONNREFUSED 10.0.0.3:6379", "connect ECONNREFUSED 2001:db8::3:6379"},
			"connect ECONNREFUSED <addr>"},
		{"connection refused from Go", []string{"dial tcp 127.0.0.1:5432: connect: connection refused",
			"dial tcp [::1]:5432: connect: connection refused", "dial tcp [fe80::1%eth0]:5432: connect: connection refused"},
			"dial tcp <addr>: connect: connection refused"},
		{"connection refused from Python", []string{"[Errno 111] Connect call failed ('127.0.0.1', 5432)",
			"[Errno 111] Connect call failed ('::1', 5432, 0, 0)"}, "[Errno <n>] Connect call failed (<addr>)"},
		{"connection refused from Java", []string{"Connection refused: localhost/127.0.0.1:5432",
			"Connection refused: localhost/0:0:0:0:0:0:0:1:5432"}, "Connection refused: localhost/<addr>"},
		{"durations", []string{"no answer in 1m30s", "no answer in 2h0m0.5s", "no answer in 45s"}, "no answer in <n>s"},
		{"a Java trace at two releases (lines 88 and 93)", []string{traces["java"], traces["java, another release"]},
			"java.lang.IllegalStateException: insufficient funds for transfer T-<id> at com.acme.pay.Ledger.debit"},
		{"a Python traceback", []string{traces["python"], strings.ReplaceAll(traces["python"], "line 17", "line 19")},
			"payments.errors.InsufficientFunds: insufficient funds for transfer T-<id> at debit (ledger.py)"},
	} {
		for _, text := range g.texts {
			if got := GroupKey(text); got != g.key {
				t.Errorf("%s: GroupKey(%q) = %q, want %q", g.name, text, got, g.key)
			}
		}
	}
}

// TestGroupKeyDifferentGroups: texts that differ in words stay apart.
func TestGroupKeyDifferentGroups(t *testing.T) {
	pairs := [][2]string{
		{"transfer 123 not found", "account 123 not found"},
		{"error E1001", "error E2002"},                // codes inside words are names
		{"utf8 decode failed", "utf16 decode failed"}, // so are versions
		{"face value bad", "cafe value bad"},          // short hex-looking words are words
		{"a1 failed", "b2 failed"},
		{"Uint8Array expected", "Uint16Array expected"}, // names with digits
		{"log4j failed", "log4j2 failed"},
		{"sha256 mismatch", "sha512 mismatch"},
		{"order ORD-7f3a9c rejected", "invoice INV-7f3a9c rejected"}, // the prefix names the kind
		{"connect ECONNREFUSED 10.0.0.3:6379", "connect ETIMEDOUT 10.0.0.3:6379"},
		{"connect ECONNREFUSED db.internal:5432", "connect ECONNREFUSED redis.internal:6379"}, // host names stay
		{traceCases()[0].text, strings.Replace(traceCases()[0].text, "com.acme.pay.Ledger.debit", "com.acme.pay.Ledger.credit", 1)},
		{traceCases()[0].text, strings.Replace(traceCases()[0].text, "IllegalStateException", "IllegalArgumentException", 1)},
		{"", "x"},
	}
	for _, p := range pairs {
		if a, b := GroupKey(p[0]), GroupKey(p[1]); a == b {
			t.Errorf("%q and %q share the key %q", p[0], p[1], a)
		}
	}
}

func TestGroupKeyStableAndIdempotent(t *testing.T) {
	for _, s := range []string{"transfer 123 not found", `x "y" 'z' 0x1 8f14e45f-ceea-467f-a0f8-ad5b6e4e2a11 2024-05-01T12:00:00Z 5ms`, "bad \xff utf8", "…<n>"} {
		k := GroupKey(s)
		if again := GroupKey(k); again != k {
			t.Errorf("GroupKey(GroupKey(%q)) = %q, want %q", s, again, k)
		}
	}
}

// TestGroupKeyIsValidUTF8: a key is a metric label and a JSON key, valid
// UTF-8 whatever bytes the error held.
func TestGroupKeyIsValidUTF8(t *testing.T) {
	for _, s := range []string{"rejected\xfe in q\xff", "\xc3", "ok \xe2\x82 then 42"} {
		if k := GroupKey(s); !utf8.ValidString(k) {
			t.Errorf("GroupKey(%q) = %q, not valid UTF-8", s, k)
		}
	}
}
