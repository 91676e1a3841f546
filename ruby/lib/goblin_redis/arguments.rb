# frozen_string_literal: true

module GoblinRedis
  # Arguments checked where they are given, before anything is sent: a TypeError for a client
  # that is none, an ArgumentError for a value out of range.
  module Arguments
    module_function

    def client!(redis)
      return redis if redis.respond_to?(:with)

      raise TypeError, "expected a Redis or a ConnectionPool of them, not #{redis.class}"
    end

    def integer!(name, value, least)
      return value if value.is_a?(Integer) && value >= least

      raise ArgumentError, "#{name} must be an Integer of at least #{least}, not #{value.inspect}"
    end

    # Seconds, at least a millisecond.
    def seconds!(name, value)
      return value if value.is_a?(Numeric) && value >= 0.001

      raise ArgumentError, "#{name} must be at least a millisecond, in seconds, not #{value.inspect}"
    end
  end
  private_constant :Arguments
end
