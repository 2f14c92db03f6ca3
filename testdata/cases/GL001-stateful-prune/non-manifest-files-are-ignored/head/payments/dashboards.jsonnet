local grafana = import "grafana.libsonnet";
{}
