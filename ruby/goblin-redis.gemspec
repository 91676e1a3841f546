# frozen_string_literal: true

require_relative "lib/goblin_redis/version"

Gem::Specification.new do |spec|
  spec.name = "goblin-redis"
  spec.version = GoblinRedis::VERSION
  spec.summary = "Goblin's native rate-limit and lock commands for redis-rb: a rack-attack store, limiters, a lock"
  spec.description = <<~TEXT
    Puts the Goblin module (native rate-limit and lease-lock commands for Redis and Valkey)
    beneath Ruby applications, on their own redis-rb client: a store for rack-attack whose every
    count is one GOBLIN.INCREX, GCRA and fixed-window limiters, and a lease lock that waits in
    line inside the server, with fencing tokens. No script.
  TEXT
  spec.authors = ["The Goblin authors"]
  spec.license = "BSD-3-Clause"
  spec.required_ruby_version = ">= 3.1"
  spec.files = Dir["lib/**/*.rb", "sig/**/*.rbs", "README.md"]
  spec.require_paths = ["lib"]
  spec.add_dependency "redis", ">= 4.6", "< 5"
  spec.metadata["rubygems_mfa_required"] = "true"
end
