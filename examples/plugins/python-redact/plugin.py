from turnpike import Transform


class Redact(Transform):
    def create(self, config):
        self.field = config.get("field", "email")

    def process(self, record):
        data = record.json()
        if self.field in data:
            data[self.field] = "***"
        return record.with_value(data)
