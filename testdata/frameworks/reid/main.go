// Command reid reads parkinglot's lossless message JSON (one message a line,
// as `parkinglot export` writes it) on stdin and writes each message back
// re-encoded by the broker package. The recorder renames the random suffix of
// queue and exchange names out of the headers; a message without a
// message_id is identified by a hash over its body and headers, so its id has
// to be computed again from the renamed headers.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"github.com/parkinglot/parkinglot/broker"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		var m broker.Message
		if err := json.Unmarshal(in.Bytes(), &m); err != nil {
			fmt.Fprintln(os.Stderr, "reid:", err)
			os.Exit(1)
		}
		b, err := json.Marshal(m)
		if err != nil {
			fmt.Fprintln(os.Stderr, "reid:", err)
			os.Exit(1)
		}
		out.Write(append(b, '\n'))
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "reid:", err)
		os.Exit(1)
	}
	if err := out.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "reid:", err)
		os.Exit(1)
	}
}
