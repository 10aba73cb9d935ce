package web

// The bundle in dist/ is built from ../../web/src by esbuild's Go API and
// committed, so serving needs no Node. After changing web/src (and running
// npm ci --prefix web once), rebuild it:
//
//	go generate ./internal/web/...
//
//go:generate go run ./build
