package installplan

// SetCustomResourcePage sets how many custom resources one request of the CRD check lists,
// for a test of its paging; the returned function restores it.
func SetCustomResourcePage(n int64) (restore func()) {
	was := customResourcePage
	customResourcePage = n
	return func() { customResourcePage = was }
}
