//! Loader throughput on generated Kubernetes YAML. Ignored by default: it
//! measures, it asserts nothing about time. Run it once with
//! `cargo test --release --test it yaml_throughput:: -- --ignored --nocapture`.

use std::fmt::Write as _;
use std::time::Instant;

use goyaml::load_all;

/// Deployments, ConfigMaps with block text, and CRD-like nested schemas.
fn corpus(target_bytes: usize) -> String {
    let mut out = String::new();
    let mut i = 0usize;
    while out.len() < target_bytes {
        i += 1;
        let _ = write!(
            out,
            "---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-{i}
  namespace: team-{ns}
  labels: {{app: app-{i}, tier: backend, version: \"1.{i}\"}}
  annotations:
    argocd.argoproj.io/sync-options: Prune=false
spec:
  replicas: 3
  selector:
    matchLabels:
      app: app-{i}
  template:
    metadata:
      labels:
        app: app-{i}
    spec:
      containers:
      - name: main
        image: registry.example.com/app-{i}:v1.2.{i}
        args: [--port=8080, --verbose, \"--level=info\"]
        ports:
        - containerPort: 8080
          protocol: TCP
        env:
        - name: FEATURE_FLAG
          value: \"on\"
        - name: TIMEOUT
          value: \"30s\"
        resources:
          limits: {{cpu: 500m, memory: 512Mi}}
          requests: {{cpu: 100m, memory: 128Mi}}
        volumeMounts:
        - name: config
          mountPath: /etc/app
      volumes:
      - name: config
        configMap:
          name: app-{i}-config
          defaultMode: 0644
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: app-{i}-config
data:
  nginx.conf: |
    server {{
      listen 8080;
      location / {{
        proxy_pass http://127.0.0.1:9000;
        proxy_set_header Host $host;
      }}
    }}
  app.properties: |-
    db.url=jdbc:postgresql://db:5432/app{i}
    db.pool=10
    cache.ttl=300
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets{i}.example.com
spec:
  group: example.com
  names: {{kind: Widget{i}, plural: widgets{i}}}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        description: >-
          A widget is a thing that does widget things,
          described over more than one line.
        properties:
          spec:
            type: object
            properties:
              size: {{type: integer, minimum: 1, maximum: 100}}
              ratio: {{type: number, default: 0.5}}
              enabled: {{type: boolean, default: true}}
              tags:
                type: array
                items: {{type: string}}
",
            ns = i % 17
        );
    }
    out
}

#[test]
#[ignore = "measurement; run with --release --ignored --nocapture"]
fn loader_throughput() {
    let text = corpus(8 << 20);
    let docs = load_all(&text).expect("generated YAML loads").len();
    let runs = 5;
    let mut best = f64::MAX;
    for _ in 0..runs {
        let start = Instant::now();
        let n = load_all(&text).map_or(0, |d| d.len());
        best = best.min(start.elapsed().as_secs_f64());
        assert_eq!(n, docs);
    }
    // The parser alone, for scale: the loader's own share is the rest.
    let mut raw = f64::MAX;
    for _ in 0..runs {
        let start = Instant::now();
        let mut parser = saphyr_parser::Parser::new_from_str(&text);
        let mut events = 0usize;
        while let Some(Ok(_)) = parser.next_event() {
            events += 1;
        }
        raw = raw.min(start.elapsed().as_secs_f64());
        assert!(events > docs);
    }
    #[allow(clippy::cast_precision_loss)]
    let mb = text.len() as f64 / 1e6;
    println!(
        "yaml loader: {mb:.1} MB, {docs} documents, best of {runs}: {best:.3} s = {:.1} MB/s \
         (saphyr-parser events alone: {raw:.3} s = {:.1} MB/s)",
        mb / best,
        mb / raw
    );
}
