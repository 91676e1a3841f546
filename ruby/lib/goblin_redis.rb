# frozen_string_literal: true

# Goblin's native rate-limit and lock commands from Ruby, on the application's own redis-rb
# client: a store for rack-attack (GoblinRedis::RackAttackStore), rate limiters
# (GoblinRedis::Limiter::GCRA, GoblinRedis::Limiter::FixedWindow) and a lease lock with fencing
# tokens (GoblinRedis::Lock), each decision one Goblin command, with no script.
require_relative "goblin_redis/version"
require_relative "goblin_redis/errors"
require_relative "goblin_redis/arguments"
require_relative "goblin_redis/commands"
require_relative "goblin_redis/connection"
require_relative "goblin_redis/rack_attack_store"
require_relative "goblin_redis/limiter"
require_relative "goblin_redis/waiter"
require_relative "goblin_redis/lock"
