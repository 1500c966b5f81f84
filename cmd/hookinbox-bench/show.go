package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// show prints the report of a results file again, as its run printed it:
// to compare runs, or to read one written on another machine, without a
// script of one's own over the JSON. A file of a scenario it does not
// know is printed as it is.
func show(w io.Writer, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var head struct {
		Options map[string]any `json:"options"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	scenario, _ := head.Options["scenario"].(string)
	switch scenario {
	case "throughput", "":
		return showAs(w, b, path, printReport)
	case "steady":
		return showAs(w, b, path, printSteady)
	case "destinations":
		return showAs(w, b, path, printDestinations)
	case "kafka":
		return showAs(w, b, path, printKafka)
	case "tracing":
		return showAs(w, b, path, printTracing)
	case "upgrade":
		return showAs(w, b, path, printUpgrade)
	case "retention":
		return showAs(w, b, path, printRetention)
	case "path":
		return showAs(w, b, path, printPath)
	default:
		_, err := w.Write(b)
		return err
	}
}

func showAs[R any](w io.Writer, b []byte, path string, print func(io.Writer, R)) error {
	var res R
	if err := json.Unmarshal(b, &res); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	print(w, res)
	return nil
}
