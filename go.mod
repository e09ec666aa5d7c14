module github.com/cpactl/cpactl

go 1.26.8
