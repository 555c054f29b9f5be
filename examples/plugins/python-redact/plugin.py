from turnpike import Transform, export


class Redact(Transform):
    def create(self, config):
        self.field = config.get("field", "email")

    def transform(self, record):
        data = record.json()
        if isinstance(data, dict) and self.field in data:
            data[self.field] = "***"
            return record.with_value(data)
        return record


export(Redact)
