function(replicas=1) [
  {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'guestbook-ui' },
    spec: { ports: [{ port: 80, targetPort: 80 }], selector: { app: 'guestbook-ui' } },
  },
  {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'guestbook-ui' },
    spec: {
      replicas: replicas,
      selector: { matchLabels: { app: 'guestbook-ui' } },
      template: {
        metadata: { labels: { app: 'guestbook-ui' } },
        spec: { containers: [{ name: 'guestbook-ui', image: 'gcr.io/google-samples/gb-frontend:v5' }] },
      },
    },
  },
]
