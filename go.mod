module github.com/sundial-cron/sundial

go 1.26
