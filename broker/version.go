package broker

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a RabbitMQ server version. The zero value means unknown.
type Version struct{ Major, Minor, Patch int }

// ParseVersion reads "3.13.7" (and tolerates suffixes such as "4.0.0-rc.1").
func ParseVersion(s string) Version {
	var v Version
	parts := strings.SplitN(s, ".", 3)
	dst := []*int{&v.Major, &v.Minor, &v.Patch}
	for i, p := range parts {
		end := 0
		for end < len(p) && p[end] >= '0' && p[end] <= '9' {
			end++
		}
		n, err := strconv.Atoi(p[:end])
		if err != nil {
			return Version{}
		}
		*dst[i] = n
	}
	return v
}

// Known reports whether the version was read.
func (v Version) Known() bool { return v != Version{} }

// AtLeast reports v >= major.minor.patch.
func (v Version) AtLeast(major, minor, patch int) bool {
	if v.Major != major {
		return v.Major > major
	}
	if v.Minor != minor {
		return v.Minor > minor
	}
	return v.Patch >= patch
}

func (v Version) String() string {
	if !v.Known() {
		return "unknown"
	}
	return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch)
}

// NackCountsTowardDeliveryLimit reports whether a quorum queue on this
// version counts a basic.nack(requeue) in x-delivery-count and toward its
// delivery limit: every give-back counts up to 4.2; from 4.3 a nack does
// not, while a reject and a lost connection still do (RabbitMQ 4.3.0
// release notes).
func (v Version) NackCountsTowardDeliveryLimit() bool { return !v.AtLeast(4, 3, 0) }
