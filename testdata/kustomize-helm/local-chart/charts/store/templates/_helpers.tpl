{{- define "store.fullname" -}}
{{ .Release.Name }}-{{ .Chart.Name }}
{{- end -}}
