package benchtest

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"
)

// CPUTime is the CPU time (user + system) used so far by this process
// and, when $PARKINGLOT_BENCH_BROKER_PID names the broker's process on
// this machine (beam.smp), by the broker (-1 otherwise). Two samples
// around a run give its CPU cost on both sides (the
// runs are broker-bound), as information beside the rates: other
// clients of the same broker count on its side too.
func CPUTime() (client, broker time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		client = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return client, brokerCPU()
}

// clockTick is the unit of /proc/PID/stat's CPU times (USER_HZ, 100 on
// Linux).
const clockTick = 10 * time.Millisecond

func brokerCPU() time.Duration {
	pid := os.Getenv("PARKINGLOT_BENCH_BROKER_PID")
	if pid == "" {
		return -1
	}
	data, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return -1
	}
	// The command name, in parentheses, may hold spaces: count the fields
	// after it (utime and stime are the 14th and 15th of the line).
	_, rest, ok := strings.Cut(string(data), ") ")
	if !ok {
		return -1
	}
	f := strings.Fields(rest)
	if len(f) < 13 {
		return -1
	}
	var utime, stime int64
	if _, err := fmt.Sscan(f[11], &utime); err != nil {
		return -1
	}
	if _, err := fmt.Sscan(f[12], &stime); err != nil {
		return -1
	}
	return time.Duration(utime+stime) * clockTick
}

// CPUPerMessage is the CPU between two CPUTime samples, in µs a message
// (-1 for the broker's when it is not known).
func CPUPerMessage(client0, broker0, client1, broker1 time.Duration, n int) (client, broker float64) {
	client = float64((client1 - client0).Microseconds()) / float64(n)
	broker = -1
	if broker0 >= 0 && broker1 >= 0 {
		broker = float64((broker1 - broker0).Microseconds()) / float64(n)
	}
	return client, broker
}
