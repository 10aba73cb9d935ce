package postgres_test

import (
	"testing"

	"foundry/internal/store"
	"foundry/internal/store/storetest"
)

func TestBlobContract(t *testing.T) {
	baseURL(t)
	storetest.BlobContract(t, func(t *testing.T) store.Store {
		u, _ := freshSchema(t)
		return open(t, u)
	})
}

func TestBlobCollectContract(t *testing.T) {
	baseURL(t)
	storetest.BlobCollectContract(t, func(t *testing.T) store.Store {
		u, _ := freshSchema(t)
		return open(t, u)
	})
}
