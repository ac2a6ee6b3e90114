package broker

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// PublishSample is one of the management API's samples of a queue's
// message_stats.publish: the count of messages published into the queue
// up to At.
type PublishSample struct {
	Count int64
	At    time.Time
}

// QueuePublishSamples reads the management API's samples of the messages
// published into a queue over the last age, one every incr (the
// msg_rates_age and msg_rates_incr parameters of GET /api/queues; RabbitMQ
// keeps a queue's samples at one a minute for an hour by default, its
// "basic" sample retention policy). Samples are newest first; none when
// the broker counts no publish into the queue (a queue only dead-lettered
// into, or management.disable_stats).
func (m *Management) QueuePublishSamples(ctx context.Context, name string, age, incr time.Duration) ([]PublishSample, error) {
	var q struct {
		MessageStats struct {
			PublishDetails struct {
				Samples []struct {
					Sample    int64 `json:"sample"`
					Timestamp int64 `json:"timestamp"` // milliseconds
				} `json:"samples"`
			} `json:"publish_details"`
		} `json:"message_stats"`
	}
	path := fmt.Sprintf("%s?msg_rates_age=%d&msg_rates_incr=%d", m.vpath("queues", name), int64(age.Seconds()), int64(incr.Seconds()))
	if err := m.do(ctx, http.MethodGet, path, nil, &q); err != nil {
		return nil, err
	}
	out := make([]PublishSample, len(q.MessageStats.PublishDetails.Samples))
	for i, s := range q.MessageStats.PublishDetails.Samples {
		out[i] = PublishSample{Count: s.Sample, At: time.UnixMilli(s.Timestamp)}
	}
	return out, nil
}
