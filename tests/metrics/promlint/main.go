// promlint reads a Prometheus text exposition on stdin, parses it and lints it with the
// rules `promtool check metrics` applies (client_golang's promlint). It prints every
// problem and exits 1 if there is any, 2 if the text does not parse.
package main

import (
	"fmt"
	"os"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
)

func main() {
	problems, err := promlint.New(os.Stdin).Lint()
	if err != nil {
		fmt.Fprintf(os.Stderr, "not valid Prometheus text format: %v\n", err)
		os.Exit(2)
	}
	for _, p := range problems {
		fmt.Printf("%s: %s\n", p.Metric, p.Text)
	}
	if len(problems) > 0 {
		os.Exit(1)
	}
}
