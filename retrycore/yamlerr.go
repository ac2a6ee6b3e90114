package retrycore

import (
	"errors"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// YAMLRule rewords one kind of yaml.v3 message in a file's terms rather
// than Go's ("field colour not found in type replay.Context").
type YAMLRule struct {
	Match *regexp.Regexp
	With  string // a regexp.ReplaceAllString template
}

// Reword is a YAMLRule; pattern must compile.
func Reword(pattern, with string) YAMLRule {
	return YAMLRule{Match: regexp.MustCompile(pattern), With: with}
}

// YAMLProblem turns a yaml.v3 decoding error into one line, each of its
// messages reworded by the first rule that matches it.
func YAMLProblem(err error, rules []YAMLRule) string {
	var lines []string
	var te *yaml.TypeError
	if errors.As(err, &te) {
		lines = te.Errors
	} else {
		lines = strings.Split(strings.TrimPrefix(err.Error(), "yaml: "), "\n")
	}
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		l = strings.TrimSpace(l)
		for _, r := range rules {
			if r.Match.MatchString(l) {
				l = r.Match.ReplaceAllString(l, r.With)
				break
			}
		}
		if l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "; ")
}
