package retrycore

import (
	"strconv"
	"strings"
	"testing"
)

// traceCase is a stack trace as a consumer writes it, and its key.
type traceCase struct {
	name, text, key string
}

func traceCases() []traceCase {
	const insufficient = "insufficient funds for transfer T-<id>"
	java := func(id string, line1, line2 int) string {
		return "java.lang.IllegalStateException: insufficient funds for transfer " + id + "\n" +
			"\tat java.base/java.util.Objects.requireNonNull(Objects.java:259)\n" +
			"\tat com.acme.pay.Ledger.debit(Ledger.java:" + strconv.Itoa(line1) + ")\n" +
			"\tat com.acme.pay.TransferListener.onMessage(TransferListener.java:" + strconv.Itoa(line2) + ")\n" +
			"\tat org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer.doInvokeListener(AbstractMessageListenerContainer.java:1731)\n" +
			"\tat java.base/java.lang.Thread.run(Thread.java:833)\n"
	}
	return []traceCase{
		{"java", java("T-8f2a91c3", 88, 31), "java.lang.IllegalStateException: " + insufficient + " at com.acme.pay.Ledger.debit"},
		{"java, another release", java("T-3b07e1d2", 93, 35), "java.lang.IllegalStateException: " + insufficient + " at com.acme.pay.Ledger.debit"},
		{"java, the root cause under Spring's wrapper",
			"org.springframework.amqp.rabbit.support.ListenerExecutionFailedException: Listener method 'public void com.acme.pay.TransferListener.onMessage(Transfer)' threw exception\n" +
				"\tat org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer.wrapToListenerExecutionFailedExceptionIfNeeded(AbstractMessageListenerContainer.java:1841)\n" +
				"\tat com.acme.pay.TransferListener$$SpringCGLIB$$0.onMessage(<generated>)\n" +
				"Caused by: com.acme.pay.InsufficientFunds: insufficient funds for transfer T-8f2a91c3\n" +
				"\tat com.acme.pay.Ledger.debit(Ledger.java:88)\n" +
				"\t... 24 more\n" +
				"\tSuppressed: java.io.IOException: close failed\n" +
				"\t\tat com.acme.pay.Audit.close(Audit.java:12)\n",
			"com.acme.pay.InsufficientFunds: " + insufficient + " at com.acme.pay.Ledger.debit"},
		{"java, a cause in the JDK alone: the frame of the exception around it",
			"Exception in thread \"pool-1-thread-3\" com.acme.pay.LedgerDown: ledger unreachable\n" +
				"\tat com.acme.pay.LedgerClient.connect(LedgerClient.java:40)\n" +
				"Caused by: java.net.ConnectException: Connection refused\n" +
				"\tat java.base/sun.nio.ch.Net.connect0(Native Method)\n" +
				"\t... 3 more\n",
			"java.net.ConnectException: Connection refused at com.acme.pay.LedgerClient.connect"},
		{"python",
			"Traceback (most recent call last):\n" +
				"  File \"/usr/local/lib/python3.12/site-packages/celery/app/trace.py\", line 453, in trace_task\n" +
				"    R = retval = fun(*args, **kwargs)\n" +
				"  File \"/app/payments/tasks.py\", line 42, in transfer\n" +
				"    ledger.debit(t)\n" +
				"  File \"/app/payments/ledger.py\", line 17, in debit\n" +
				"    raise InsufficientFunds(f\"insufficient funds for transfer {t.id}\")\n" +
				"    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n" +
				"payments.errors.InsufficientFunds: insufficient funds for transfer T-8f2a91c3\n",
			"payments.errors.InsufficientFunds: " + insufficient + " at debit (ledger.py)"},
		{"python, chained: the first traceback is the cause",
			"Traceback (most recent call last):\n" +
				"  File \"/usr/lib/python3.12/socket.py\", line 850, in create_connection\n" +
				"    sock.connect(sa)\n" +
				"ConnectionRefusedError: [Errno 111] Connection refused\n" +
				"\n" +
				"The above exception was the direct cause of the following exception:\n" +
				"\n" +
				"Traceback (most recent call last):\n" +
				"  File \"/app/payments/ledger.py\", line 9, in connect\n" +
				"    raise LedgerDown(\"ledger 10.0.0.3:7000 down\") from e\n" +
				"payments.errors.LedgerDown: ledger 10.0.0.3:7000 down\n",
			"ConnectionRefusedError: [Errno <n>] Connection refused at connect (ledger.py)"},
		{"node",
			"TypeError: Cannot read properties of undefined (reading 'amount')\n" +
				"    at debit (/app/src/ledger.js:42:17)\n" +
				"    at async Consumer.handle (/app/src/consumer.js:10:5)\n" +
				"    at async /app/node_modules/amqplib/lib/channel.js:20:3\n",
			"TypeError: Cannot read properties of undefined (reading '…') at debit (ledger.js)"},
		{"node, the runtime's frames alone",
			"Error: connect ECONNREFUSED ::1:5432\n" +
				"    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1555:16)\n",
			"Error: connect ECONNREFUSED <addr>"},
		{"go",
			"panic: runtime error: index out of range [5] with length 3\n\n" +
				"goroutine 7 [running]:\n" +
				"github.com/acme/pay/ledger.(*Ledger).Debit(0x0, {0xc000012345, 0x8})\n" +
				"\t/app/ledger/ledger.go:42 +0x1d\n" +
				"main.handle(...)\n" +
				"\t/app/main.go:12\n" +
				"created by main.main in goroutine 1\n" +
				"\t/app/main.go:30 +0x65\n",
			"panic: runtime error: index out of range [<n>] with length <n> at github.com/acme/pay/ledger.(*Ledger).Debit"},
		{"go, from the runtime up",
			"panic: boom\n\ngoroutine 1 [running]:\nruntime.gopanic(...)\n\t/usr/local/go/src/runtime/panic.go:770\nnet/http.(*conn).serve(0xc0)\n\t/usr/local/go/src/net/http/server.go:2000\nmain.main()\n\t/app/main.go:5 +0x1d\n",
			"panic: boom at main.main"},
		{".NET",
			"System.InvalidOperationException: transfer failed\n" +
				" ---> System.Collections.Generic.KeyNotFoundException: The given key 'T-8f2a91c3' was not present in the dictionary.\n" +
				"   at System.Collections.Generic.Dictionary`2.get_Item(TKey key)\n" +
				"   at Acme.Pay.Ledger.Debit(String id) in /src/Ledger.cs:line 42\n" +
				"   --- End of inner exception stack trace ---\n" +
				"   at Acme.Pay.Consumer.Consume(ConsumeContext`1 context) in /src/Consumer.cs:line 12\n",
			"System.Collections.Generic.KeyNotFoundException: The given key '…' was not present in the dictionary. at Acme.Pay.Ledger.Debit"},
	}
}

func TestGroupKeyOfATrace(t *testing.T) {
	for _, tc := range traceCases() {
		if got := GroupKey(tc.text); got != tc.key {
			t.Errorf("%s: GroupKey = %q, want %q", tc.name, got, tc.key)
		}
		// Windows line ends and a trailing message do not matter.
		if got := GroupKey(strings.ReplaceAll(tc.text, "\n", "\r\n")); got != tc.key {
			t.Errorf("%s, CRLF: GroupKey = %q, want %q", tc.name, got, tc.key)
		}
	}
}

// TestGroupKeyOfTextsThatAreNoTrace: several lines without frames are
// one text, as before.
func TestGroupKeyOfTextsThatAreNoTrace(t *testing.T) {
	for text, want := range map[string]string{
		"tab\t5\n6":                     "tab <n> <n>",
		"ledger down\nat least 3 tries": "ledger down at least <n> tries",
		"first line\n  second line 42":  "first line second line <n>",
	} {
		if got := GroupKey(text); got != want {
			t.Errorf("GroupKey(%q) = %q, want %q", text, got, want)
		}
	}
}

// TestFactsGroupKey: the frameworks that put the trace in a header of its
// own are grouped by it; the others by their error.
func TestFactsGroupKey(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    Facts
		key  string
	}{
		{"no trace", Facts{Error: "transfer 123 not found"}, "transfer <n> not found"},
		{"MassTransit: frames alone, the exception in headers of its own",
			Facts{Error: "Object reference not set to an instance of an object.", ErrorType: "System.NullReferenceException",
				StackTrace: "   at Orders.Consumers.SubmitOrderConsumer.Consume(ConsumeContext`1 context) in /src/Orders/Consumers/SubmitOrderConsumer.cs:line 27\n   at MassTransit.DependencyInjection.ScopeConsumerFactory`1.Send[TMessage](ConsumeContext`1 context, IPipe`1 next)"},
			"System.NullReferenceException: Object reference not set to an instance of an object. at Orders.Consumers.SubmitOrderConsumer.Consume"},
		{"a trace of one frame", Facts{Error: "boom", StackTrace: "   at Acme.Pay.Ledger.Debit()"}, "boom at Acme.Pay.Ledger.Debit"},
		{"a trace that is none", Facts{Error: "boom 1", StackTrace: "(no stack)"}, "boom <n>"},
	} {
		if got := tc.f.GroupKey(); got != tc.key {
			t.Errorf("%s: GroupKey = %q, want %q", tc.name, got, tc.key)
		}
	}
}

func BenchmarkGroupKeyTrace(b *testing.B) {
	var texts []string
	for _, tc := range traceCases() {
		texts = append(texts, tc.text)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		GroupKey(texts[i%len(texts)])
	}
}
