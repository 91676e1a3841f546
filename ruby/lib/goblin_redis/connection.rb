# frozen_string_literal: true

require "redis"

# Goblin from Ruby (see goblin_redis.rb).
module GoblinRedis
  # How a Goblin command reaches the server: on the application's own client (a Redis, or a
  # ConnectionPool of them, as Rails' RedisCacheStore keeps them), after the module check.
  module Connection
    # The clients whose server passed the check, weakly: a client that is collected is forgotten.
    CHECKED = ObjectSpace::WeakMap.new
    CHECKING = Thread::Mutex.new
    private_constant :CHECKED, :CHECKING

    module_function

    # `command` (an array of arguments, see Commands) on `target`, after the module check; its
    # reply as redis-rb gives it. A server that lacks the Goblin command is a ModuleError.
    def call(target, command)
      target.with do |redis|
        check(redis)
        send_checked(redis, command)
      end
    end

    # The module check, alone, for an operation of core commands only.
    def check(redis)
      return if CHECKED[redis]

      CHECKING.synchronize do
        return if CHECKED[redis]

        begin
          check_module_list(redis.call("MODULE", "LIST"))
        rescue Redis::CommandError
          # An ACL or a proxy refused MODULE LIST: taken at its word, and a Goblin command the
          # server then lacks is explained by send_checked.
          nil
        end
        CHECKED[redis] = true
      end
    end

    # `command` on `redis`, its missing-command error explained.
    def send_checked(redis, command)
      redis.call(*command)
    rescue Redis::CommandError => e
      raise explained(command.first.to_s, e) || e
    end

    # A failed check is not kept: the next call asks again, and finds a module loaded meanwhile.
    def check_module_list(reply)
      version = module_version(reply)
      raise ModuleError, missing_message("Goblin module (MODULE LIST lists none)") if version.nil?
      raise ModuleError, too_old_message(version) if version < MODULE_VERSION
    end

    # Goblin's `ver` in a MODULE LIST reply (RESP2's flat arrays, or RESP3's maps), nil when it
    # is not loaded.
    def module_version(reply)
      Array(reply).each do |entry|
        fields = (entry.is_a?(Hash) ? entry : Array(entry).each_slice(2).to_h).transform_keys(&:to_s)
        return Integer(fields.fetch("ver", 0)) if fields["name"].to_s == "goblin"
      end
      nil
    end

    def explained(command, error)
      return unless command.upcase.start_with?("GOBLIN.")

      text = error.message.downcase
      return ModuleError.new(missing_message(command)) if text.include?("unknown command")
      return unless text.include?("wrong number of arguments")

      ModuleError.new(
        "the server's #{command} does not take these arguments: its Goblin module is older than " \
        "goblin-redis needs (version #{MODULE_VERSION} or later): load a newer libgoblin.so"
      )
    end

    def missing_message(what)
      "the server has no #{what}: load the Goblin module (loadmodule /path/to/libgoblin.so in " \
        "its config file, or MODULE LOAD /path/to/libgoblin.so; on every node of a cluster); " \
        "goblin-redis needs Goblin #{version_text(MODULE_VERSION)} (MODULE LIST's ver " \
        "#{MODULE_VERSION}) or later"
    end

    def too_old_message(version)
      "the server's Goblin module is version #{version} (#{version_text(version)}); goblin-redis " \
        "needs version #{MODULE_VERSION} (#{version_text(MODULE_VERSION)}) or later: load a newer " \
        "libgoblin.so (MODULE UNLOAD needs the module's allow-unload argument, so restart the " \
        "server with the new loadmodule)"
    end

    def version_text(version)
      "#{version / 10_000}.#{version / 100 % 100}.#{version % 100}"
    end
  end

  # `command` (see Commands) on `target`, a Redis or a ConnectionPool of them, after the module
  # check: `GoblinRedis.call(redis, GoblinRedis::Commands.increx("rate:user42", 60))`.
  def self.call(target, command)
    Connection.call(target, command)
  end
end
