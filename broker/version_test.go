package broker

import "testing"

func TestParseVersion(t *testing.T) {
	cases := []struct {
		in   string
		want Version
	}{
		{"3.10.8", Version{3, 10, 8}},
		{"3.13.7", Version{3, 13, 7}},
		{"4.0.0-rc.1", Version{4, 0, 0}},
		{"4.1.0+2.g1234", Version{4, 1, 0}},
		{"3.12", Version{3, 12, 0}},
		{"4", Version{4, 0, 0}},
		{"", Version{}},
		{"unknown", Version{}},
		{"v3.10.8", Version{}},
		{"3.x.1", Version{}},
		{"3.10.8.1", Version{3, 10, 8}},
	}
	for _, c := range cases {
		got := ParseVersion(c.in)
		if got != c.want {
			t.Errorf("ParseVersion(%q) = %v, want %v", c.in, got, c.want)
		}
		if got.Known() != (c.want != Version{}) {
			t.Errorf("ParseVersion(%q).Known() = %v", c.in, got.Known())
		}
	}
}

func TestVersionAtLeast(t *testing.T) {
	v := Version{3, 13, 3}
	cases := []struct {
		major, minor, patch int
		want                bool
	}{
		{3, 13, 3, true}, {3, 13, 2, true}, {3, 13, 4, false},
		{3, 12, 99, true}, {3, 14, 0, false}, {2, 99, 99, true}, {4, 0, 0, false},
	}
	for _, c := range cases {
		if got := v.AtLeast(c.major, c.minor, c.patch); got != c.want {
			t.Errorf("%v.AtLeast(%d.%d.%d) = %v, want %v", v, c.major, c.minor, c.patch, got, c.want)
		}
	}
}

func TestVersionString(t *testing.T) {
	if got := (Version{4, 0, 5}).String(); got != "4.0.5" {
		t.Errorf("String() = %q", got)
	}
	if got := (Version{}).String(); got != "unknown" {
		t.Errorf("zero String() = %q", got)
	}
}
