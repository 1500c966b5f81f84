// Command hookinbox receives webhooks, records them in a PostgreSQL inbox and
// processes them with River workers, with the handlers hookinbox ships. A
// binary of your own is the same line with your options: see the
// hookinbox package and README.md.
package main

import "github.com/hookinbox/hookinbox"

func main() { hookinbox.Main(hookinbox.WithShippedHandlers()) }
