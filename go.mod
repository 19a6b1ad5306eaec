module github.com/sundial-cron/sundial

go 1.26

require (
	github.com/gorhill/cronexpr v0.0.0-20180427100037-88b0669f7d75
	github.com/robfig/cron/v3 v3.0.1
)
