package main

import (
	"context"
	"errors"
	"io"
)

func runSearch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("search: not yet")
}
