package service

// SetSearchOff leaves the search index out of s's writes, so a benchmark
// can measure what the index costs.
func SetSearchOff(s *Service, off bool) { s.searchOff = off }
