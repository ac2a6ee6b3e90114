package replay

import (
	"context"
	"fmt"

	"github.com/parkinglot/parkinglot/broker"
)

// ReadyCount is a queue's ready messages by a passive declare on the
// consuming connection: the broker's own count at this moment, not the
// management API's statistics, which lag by seconds.
func (s *Session) ReadyCount(ctx context.Context, queue string) (int, error) {
	conn, err := s.consumer(ctx)
	if err != nil {
		return 0, err
	}
	ch, err := conn.Channel()
	if err != nil {
		return 0, fmt.Errorf("open channel: %w", broker.Explain(err))
	}
	defer conn.CloseChannel(ch)
	return broker.ReadyCount(ch, queue)
}
