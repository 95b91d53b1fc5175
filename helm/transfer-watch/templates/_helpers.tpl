{{/*
Name of the chart, or nameOverride.
*/}}
{{- define "transfer-watch.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Full name: fullnameOverride, or release name + chart name (the release name alone when it contains the chart name).
Truncated to 63 characters because some Kubernetes name fields are limited to that (DNS naming spec).
*/}}
{{- define "transfer-watch.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Namespace of every resource.
*/}}
{{- define "transfer-watch.namespace" -}}
{{- default .Release.Namespace .Values.namespaceOverride }}
{{- end }}

{{/*
Chart name and version, for the helm.sh/chart label.
*/}}
{{- define "transfer-watch.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Selector labels: stable for the life of the release (a Deployment's selector is immutable).
*/}}
{{- define "transfer-watch.selectorLabels" -}}
app.kubernetes.io/name: {{ include "transfer-watch.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
Common labels.
*/}}
{{- define "transfer-watch.labels" -}}
helm.sh/chart: {{ include "transfer-watch.chart" . }}
{{ include "transfer-watch.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: transfer-watch
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
ServiceAccount name.
*/}}
{{- define "transfer-watch.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "transfer-watch.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
Secret holding the credentials: existingSecret, or the chart's own.
*/}}
{{- define "transfer-watch.secretName" -}}
{{- default (include "transfer-watch.fullname" .) .Values.secrets.existingSecret }}
{{- end }}

{{/*
Image reference: registry/repository, then @digest or :tag (default appVersion).
*/}}
{{- define "transfer-watch.image" -}}
{{- $repository := .Values.image.repository }}
{{- if .Values.image.registry }}
{{- $repository = printf "%s/%s" .Values.image.registry .Values.image.repository }}
{{- end }}
{{- if .Values.image.digest }}
{{- printf "%s@%s" $repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" $repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/*
The config file the chart mounts (config.yaml).
*/}}
{{- define "transfer-watch.configYaml" -}}
{{- $config := deepCopy .Values.config }}
{{- if .Values.webConfig.existingSecret }}
{{- $_ := set $config "server" (merge (dict "web_config_file" "/etc/transfer-watch/web/web-config.yml") (default (dict) $config.server)) }}
{{- end }}
{{- $history := dict "retention" .Values.history.retention }}
{{- if or .Values.history.postgres.url .Values.history.postgres.existingSecret }}
{{- $_ := set $history "postgres" (dict "url" "${HISTORY_POSTGRES_URL}" "password" "${HISTORY_POSTGRES_PASSWORD:-}") }}
{{- end }}
{{- $config = merge (dict "history" $history) $config }}
{{- if .Values.ha.enabled }}
{{- $redis := dict "url" "${REDIS_URL}" "password" "${REDIS_PASSWORD:-}" "key_prefix" .Values.ha.redis.keyPrefix }}
{{- if .Values.ha.redis.caSecret }}
{{- $_ := set $redis "tls" (dict "ca_file" "/etc/transfer-watch-redis-ca/ca.crt") }}
{{- end }}
{{- $ha := dict "redis" $redis "lease_ttl" .Values.ha.leaseTtl "replica_name" "${POD_NAME}" }}
{{ toYaml (merge (dict "ha" $ha) $config) }}
{{- else }}
{{ toYaml $config }}
{{- end }}
{{- end }}
