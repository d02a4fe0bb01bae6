"""What the API server serves: resource types, built-ins, CRDs, schema validation, conversion, discovery."""
