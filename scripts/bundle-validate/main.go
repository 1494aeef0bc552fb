// Command bundle-validate runs the default bundle validators of operator-framework/api (the
// checks of `operator-sdk bundle validate <dir>`) over an OLM bundle directory, so that opgen's
// end-to-end tests can hold the bundles opgen writes to OLM's own rules without installing
// Operator SDK. It prints every error and warning and exits 1 when there is an error.
//
// Usage: bundle-validate <bundle directory>
package main

import (
	"fmt"
	"os"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/validation"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: bundle-validate <bundle directory>")
		os.Exit(2)
	}
	bundle, err := manifests.GetBundleFromDir(os.Args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "cannot load the bundle: %v\n", err)
		os.Exit(1)
	}
	failed := false
	for _, result := range validation.DefaultBundleValidators.Validate(bundle.ObjectsToValidate()...) {
		for _, e := range result.Errors {
			fmt.Printf("error: %s: %v\n", result.Name, e)
			failed = true
		}
		for _, w := range result.Warnings {
			fmt.Printf("warning: %s: %v\n", result.Name, w)
		}
	}
	if failed {
		os.Exit(1)
	}
	fmt.Printf("bundle %s (package %s, channels %v) passes the default validators\n",
		bundle.CSV.GetName(), bundle.Package, bundle.Channels)
}
