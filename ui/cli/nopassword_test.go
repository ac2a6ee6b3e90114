//go:build integration

package cli_test

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/ui/cli/clitest"
)

// TestUserWithoutPasswordOnABroker: a URL with a user and no password
// never logs in with amqp091-go's default password "guest" (guest itself
// got in that way; another user got "wrong username or password"). It is
// refused before dialling, exit 2, naming the user; with a password source
// the same URL connects.
func TestUserWithoutPasswordOnABroker(t *testing.T) {
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "nopw.dlq")
	brokertest.DeclareQueue(t, ch, q, nil)
	brokertest.Publish(t, ch, "", q, amqp.Publishing{MessageId: "m-1", Body: []byte("x")})
	brokertest.WaitDepth(t, q, 1, 10*time.Second)

	guest, err := url.Parse(brokertest.URL())
	if err != nil {
		t.Fatal(err)
	}
	guestPassword, _ := guest.User.Password()
	other := brokertest.Name(t, "ops")
	otherPassword := "pw-" + other
	brokertest.CreateUser(t, other, otherPassword, "", true)

	for _, tc := range []struct{ user, password string }{{guest.User.Username(), guestPassword}, {other, otherPassword}} {
		t.Run(tc.user, func(t *testing.T) {
			u := *guest
			u.User = url.User(tc.user)
			noPassword := u.String()

			res := clitest.NewCLI(t).Run("", "--url", noPassword, "list", q)
			want := `no password given for user "` + tc.user + `"`
			if res.Code != 2 || !strings.Contains(res.Stderr, want) || strings.Count(strings.TrimSpace(res.Stderr), "\n") > 0 {
				t.Errorf("exit %d, stderr %q; want 2 and one line with %q", res.Code, res.Stderr, want)
			}
			if strings.Contains(res.Stdout, "m-1") || strings.Contains(res.Stderr, "wrong username or password") {
				t.Errorf("it dialled: stdout %q stderr %q", res.Stdout, res.Stderr)
			}

			file := filepath.Join(t.TempDir(), "pw")
			if err := os.WriteFile(file, []byte(tc.password+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			res = clitest.NewCLI(t, "PARKINGLOT_PASSWORD_FILE="+file).Run("", "--url", noPassword, "list", q)
			if res.Code != 0 || !strings.Contains(res.Stdout, "m-1") {
				t.Errorf("with PARKINGLOT_PASSWORD_FILE: exit %d, stdout %q, stderr %q; want the message listed", res.Code, res.Stdout, res.Stderr)
			}
			if tc.password != tc.user && strings.Contains(res.Stdout+res.Stderr, tc.password) {
				t.Errorf("the password shows: %q %q", res.Stdout, res.Stderr)
			}
		})
	}
}
