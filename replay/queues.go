package replay

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/parkinglot/parkinglot/broker"
)

// QueueRow is a queue as `parkinglot queues` and the TUI list it.
type QueueRow struct {
	broker.QueueInfo
	// ParkingLot is true for queues the config names as parking lots and
	// for names that conventionally are (*.dlq, *dead-letter*, *_error, …).
	ParkingLot bool `json:"parking_lot"`
}

// Queues lists the vhost's queues, parking lots first, then by name. It
// needs the management API.
func (s *Session) Queues(ctx context.Context) ([]QueueRow, error) {
	m, err := s.Management(ctx)
	if err != nil {
		return nil, fmt.Errorf("list queues: %w", err)
	}
	qs, err := m.Queues(ctx)
	if err != nil {
		return nil, fmt.Errorf("list queues: %w", err)
	}
	rows := make([]QueueRow, len(qs))
	for i, q := range qs {
		rows[i] = QueueRow{QueueInfo: q, ParkingLot: s.cfg.IsParkingLot(q.Name) || LooksLikeParkingLot(q.Name)}
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].ParkingLot != rows[j].ParkingLot {
			return rows[i].ParkingLot
		}
		return rows[i].Name < rows[j].Name
	})
	return rows, nil
}

// LooksLikeParkingLot reports whether a queue name follows a parking-lot
// convention: ours and RabbitMQ users' (*.dlq, *dead-letter*, *parking*),
// MassTransit's (*_error) and others' (*.error*).
func LooksLikeParkingLot(name string) bool {
	n := strings.ToLower(name)
	switch {
	case strings.HasSuffix(n, ".dlq"), strings.HasSuffix(n, "-dlq"), strings.HasSuffix(n, "_dlq"),
		strings.HasSuffix(n, "_error"), strings.HasSuffix(n, "_skipped"),
		strings.Contains(n, "dead-letter"), strings.Contains(n, "deadletter"), strings.Contains(n, "dead_letter"),
		strings.Contains(n, ".error"), strings.Contains(n, "parking"):
		return true
	}
	return false
}
